'use strict';

/** The command line was wrong (exit 2): nothing was sent, nothing was consumed. */
class UsageError extends Error {}

/** vanish or the server refused, or the server could not be reached (exit 1). */
class Refusal extends Error {}

/**
 * A text from a server (its error message, a link it answered) made safe to print on a terminal: control
 * characters (escape sequences could rewrite the screen) are shown as \xNN, and it is cut short.
 */
function shown(value, max = 200) {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut.replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

module.exports = { UsageError, Refusal, shown };
