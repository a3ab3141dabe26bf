'use strict';
/*
 * Passcodes never come from the command line, where `ps` shows them to every user of the machine and the
 * shell keeps them in its history: they come from a file, the environment, or a prompt that does not echo.
 */
const fs = require('node:fs');
const tty = require('node:tty');
const { Refusal, UsageError } = require('./errors');

const PASSCODE_MAX_CODE_POINTS = 128;

const ARGV_REFUSAL = 'a passcode on the command line is refused: other users see it in `ps` and your shell keeps it in its history. '
  + 'Use --passcode-file FILE, the environment variable VANISH_PASSCODE, or (create) --ask-passcode / (open) the prompt';

function checked(passcode, where) {
  if (passcode === '') throw new UsageError(`the passcode from ${where} is empty`);
  if ([...passcode].length > PASSCODE_MAX_CODE_POINTS) throw new UsageError(`the passcode from ${where} is longer than ${PASSCODE_MAX_CODE_POINTS} characters`);
  return passcode;
}

/** The file's text without one final line break (what `echo pin > file` adds). */
function passcodeFromFile(path) {
  let text;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the passcode file ${path}: ${err.code ?? err.message}`);
  }
  return checked(text.replace(/\r?\n$/, ''), `the file ${path}`);
}

function passcodeFromEnv(env) {
  const value = env.VANISH_PASSCODE;
  return value === undefined || value === '' ? null : checked(value, 'VANISH_PASSCODE');
}

/**
 * The terminal to ask on: /dev/tty (so that a note piped on stdin does not get in the way), else stdin when it
 * is one (Windows). Null when there is no terminal at all (a script, a CI job).
 */
function openTerminal() {
  try {
    const inFd = fs.openSync('/dev/tty', 'r');
    const outFd = fs.openSync('/dev/tty', 'w');
    const input = new tty.ReadStream(inFd);
    const output = new tty.WriteStream(outFd);
    return { input, output, close: () => { input.destroy(); output.destroy(); } };
  } catch {
    if (process.stdin.isTTY) return { input: process.stdin, output: process.stderr, close: () => { process.stdin.pause(); } };
    return null;
  }
}

/** Asks on the terminal with echo off; resolves null when there is no terminal. */
function askHidden(question) {
  const terminal = openTerminal();
  if (!terminal) return Promise.resolve(null);
  const { input, output } = terminal;
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (outcome) => {
      input.removeListener('data', onData);
      input.setRawMode(false);
      output.write('\n');
      terminal.close();
      outcome();
    };
    const onData = (chunk) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') { finish(() => resolve(value)); return; }
        // Raw mode turns Ctrl-C and Ctrl-D into characters: they still mean "stop".
        if (ch === '\u0003' || (ch === '\u0004' && value === '')) { finish(() => reject(new Refusal('cancelled at the passcode prompt: nothing was sent'))); return; }
        if (ch === '\u007f' || ch === '\b') { value = [...value].slice(0, -1).join(''); continue; }
        if (ch < ' ') continue;
        value += ch;
      }
    };
    // Echo off before the question shows, so that nothing typed ahead of it is echoed either.
    input.setRawMode(true);
    input.on('data', onData);
    input.resume();
    output.write(question);
  });
}

/** create: --passcode-file, else --ask-passcode (twice, must match), else VANISH_PASSCODE, else none. */
async function creationPasscode({ file, ask, env }) {
  if (file !== undefined && ask) throw new UsageError('give --passcode-file or --ask-passcode, not both');
  if (file !== undefined) return passcodeFromFile(file);
  if (ask) {
    const first = await askHidden('Passcode for the note (not shown): ');
    if (first === null) throw new UsageError('--ask-passcode needs a terminal; in a script use --passcode-file FILE or VANISH_PASSCODE');
    checked(first, 'the prompt');
    const again = await askHidden('The same passcode again: ');
    if (again !== first) throw new UsageError('the two passcodes differ: nothing was sent');
    return first;
  }
  return passcodeFromEnv(env);
}

/** open, for a note that has a passcode: --passcode-file, else VANISH_PASSCODE, else the prompt. */
async function readingPasscode({ file, env }) {
  if (file !== undefined) return passcodeFromFile(file);
  const fromEnv = passcodeFromEnv(env);
  if (fromEnv !== null) return fromEnv;
  const typed = await askHidden('This note has a passcode (not shown): ');
  if (typed === null) throw new UsageError('this note has a passcode and there is no terminal to ask for it: give --passcode-file FILE or VANISH_PASSCODE. Nothing was consumed');
  return checked(typed, 'the prompt');
}

module.exports = { ARGV_REFUSAL, PASSCODE_MAX_CODE_POINTS, passcodeFromFile, passcodeFromEnv, creationPasscode, readingPasscode, askHidden };
