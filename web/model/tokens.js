// tokens.js - the sentence -> tokens -> vocabulary rows (DOM-free).
//
//   tokenize      words and single symbols, like re.findall(r"(?:[^\W_]|')+|\S", text)
//   vocabulary    distinct lower-cased tokens, and each token's row of E
//   checkSentence a sentence the page accepts (1 to MAX_TOKENS tokens, or a given limit; no
//                 markup), or a message

import { COURSE } from './defaults.js';

export const DEFAULT_SENTENCE = COURSE.sentence;
export const MAX_TOKENS = 64;

const TOKEN_RE = /[\p{L}\p{N}']+|\S/gu;

/**
 * Words are maximal runs of letters, digits and apostrophes; every other non-space character
 * (punctuation, each emoji code point) is a token of its own; whitespace only separates.
 * Python: re.findall(r"(?:[^\W_]|')+|\S", text).
 */
export function tokenize(text) {
  return String(text ?? '').match(TOKEN_RE) ?? [];
}

/**
 * Distinct lower-cased tokens in order of first appearance, and each token's row:
 * the same word in any case always gets the same row.
 */
export function vocabulary(tokens) {
  const vocab = [];
  const index = new Map();
  const ids = tokens.map((tok) => {
    const key = tok.toLowerCase();
    if (!index.has(key)) {
      index.set(key, vocab.length);
      vocab.push(key);
    }
    return index.get(key);
  });
  return { vocab, ids };
}

// Something that looks like an HTML tag, comment, doctype or character reference.
const HTML_RE = /<\/?[A-Za-z!?][^<>]*>|&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/i;

/**
 * Checks a sentence of 1 to maxTokens tokens (lesson 1's 64 unless given); returns { tokens } or
 * { error } (a message for the student, plain text).
 */
export function checkSentence(text, maxTokens = MAX_TOKENS) {
  const s = String(text ?? '');
  const m = s.match(HTML_RE);
  if (m) {
    const markup = m[0].length > 24 ? `${m[0].slice(0, 24)}…` : m[0];
    return {
      error: `The sentence contains HTML (${markup}). Type plain words: markup is not read here, and the page never renders it.`,
    };
  }
  const tokens = tokenize(s);
  if (tokens.length === 0) {
    return { error: `The sentence is empty: type at least one word (1 to ${maxTokens} tokens).` };
  }
  if (tokens.length > maxTokens) {
    return {
      error: `The sentence has ${tokens.length} tokens; the page accepts 1 to ${maxTokens} (attention is T×T, so ${tokens.length}×${tokens.length} would be unreadable).`,
    };
  }
  return { tokens };
}
