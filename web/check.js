// check.js - the notebook check's public facade (DOM-free), the one door the page uses to it:
// read a student's NumPy arrays (.npy; .npz, skipping the members that cannot be used; printed
// text), write .npy/.npz files, check a notebook's arrays step by step against the engine
// (checkNotebook), and what the page shows around it (the course's names and save lines, the
// catalogue of mistakes, lesson 5's run from a student's arrays). Its modules live in web/check/
// (ESLint keeps every other module of web/ out of them).
export { readNpy, writeNpy } from './io/npy.js';
export { loadNpz, readNpz, writeNpz } from './io/npz.js';
export { parseNumpyText } from './io/text.js';
export { checkNotebook, resultOrder } from './check/check.js';
export { adaptLayout, readingNote } from './check/layouts.js';
export {
  HEAD_COLUMN_NAMES,
  LESSON1_NAMES,
  LESSON_KEYS,
  LESSON_SAVES,
  acceptedShapes,
  arrayKey,
  courseName,
  lessonName,
  lessonOf,
  lessonSaveLine,
  savezLine,
} from './check/names.js';
export { MISTAKES, namesEdit, recordOf, rightLine } from './check/catalogue.js';
export { editVariant, namedEdit, studentLines } from './check/edits.js';
export { Pipeline } from './check/pipeline.js';
export { tensorPlan } from './check/steps.js';
export { shownName } from './check/analyses/layout.js';
export { studentRun } from './check/training-run.js';
