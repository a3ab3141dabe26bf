'use strict';
const { parseArgs } = require('node:util');
const { create, DEFAULT_SERVER } = require('./create');
const { Refusal, UsageError } = require('./errors');
const { VERSION } = require('./http');
const { open } = require('./open');
const { ARGV_REFUSAL } = require('./passcode');
const { inbox, request, sendTo } = require('./requests');
const { receipts } = require('./receipts');
const { verifySite } = require('./verify-site');

const USAGE = `Usage: vanish create [options] [< file]
       vanish open [options] LINK        (or: vanish open - < file-with-the-link)
       vanish request --label TEXT [options]
       vanish send [options] REQUEST_LINK [< file]
       vanish inbox [options] INBOX_LINK  (or: vanish inbox --key-file PATH, or: vanish inbox - < file)
       vanish receipts list | export --out FILE | verify FILE --keys KEYS | checkin RECEIPT_LINK
       vanish verify-site [--manifest FILE]... URL

vanish create seals a note on this machine and prints its link; the key is the part after #, which the
server never receives. It also prints the receipt link (on stderr): keep it, do not share it.
vanish open reads a note through the server's own note page, opens it on this machine, and prints its text;
the files of a note with files are downloaded, opened as they arrive and written to the --out directory.
The key never leaves this machine. A note may be readable only once: the second time, nothing is printed.
vanish receipts checkin tells the server "I am still here" for a note held by a dead-man's switch
(release_after_silence_hours): it stays closed until that many hours from now.

create options:
  -f, --file PATH          read the note's text from PATH (default: standard input)
  -a, --attach PATH        attach the file at PATH (repeat for several): sealed here and uploaded, resumably;
                           with files the text is optional (read from --file, or from standard input unless
                           that is a terminal)
  -v, --views N            views allowed, 1-100 (default 1)
  -e, --expires HOURS      hours until it expires, 1-8760 (default 24 when it expires by time)
  -t, --type TYPE          view, time or both (default: from --views and --expires; view when neither)
      --ask-passcode       ask for a passcode the reader must type too (on the terminal, not shown)
      --passcode-file PATH read that passcode from PATH (one final line break is dropped)
  -n, --notify EMAIL       e-mail this address when the note is read
  -s, --send-link EMAIL    e-mail the link to this address (without the key: send that yourself)
  -w, --webhook URL        POST signed events of this note there (docs/webhooks.md); prints its secret once
      --shrink-after-first-view MINUTES   after the first view, end the note within MINUTES
      --available-from TIME    nobody can open it before TIME ("2026-12-24 18:00:00" UTC, or ISO 8601 with a zone)
      --release-after-silence HOURS  a dead-man's switch: held while you check in every HOURS, opens when you miss one
      --server URL         the vanish server (default: $VANISH_URL, else ${DEFAULT_SERVER})
      --json               print every field of the server's answer, the full link and the key as JSON

vanish receipts: create keeps each receipt link in RECEIPTS_FILE (mode 600; see below). "list" shows each
note's state from its signed receipt (waiting, previewed by a bot, read, ended), "export --out FILE" writes them
as one file of signed receipts, "verify FILE --keys KEYS" checks such a file offline against a key set you saved
(/.well-known/vanish-receipt-keys.json), "checkin" tells a dead-man's switch you are still here.
vanish verify-site fetches a vanish site's pages and every script and stylesheet, and says whether they are
exactly those of a release this vanish knows (the one it was packed with, or --manifest FILE), naming each
file that differs.

vanish request asks someone for a secret: it makes a key pair on this machine, sends the server only the
public key, prints the request link (for the sender) on stdout and your inbox link (with the private key after #)
on stderr, and keeps the key in a file of its own (mode 600). vanish send seals an answer here to a request's key.
vanish inbox lists a request's answers; --open N or --all opens them here (each opening is a reveal of that answer).

request options:
      --label TEXT         what you ask for, shown to senders (not a secret; required)
      --count N            how many answers it takes, 1-1000 (default 1)
      --days N             days it stays open, 1-90 (default 7)
  -v, --views N            how many times each answer can be opened, 1-100 (default 1)
      --allow-files        senders may attach files (vanish send --attach, or the form), sealed like the text
  -n, --notify EMAIL       e-mail this address when an answer arrives
  -w, --webhook URL        POST a signed request.submitted event there for each answer
      --origin ORIGIN      a site that may embed the form (repeat for more)
      --key-file PATH      where to keep the private key (default ./vanish-inbox-<id>.key; never overwritten)

send options:
  -f, --file PATH          read the answer from PATH (default: standard input)
  -a, --attach PATH        attach the file at PATH (repeat for several), where the request allows files: sealed
                           here and uploaded, resumably; the text is then optional

inbox options:
      --key-file PATH      the file vanish request wrote, instead of the link
      --open N             open answer N and print it
      --all                open every answer that can still be opened
      --close              close the request now: it takes no more answers
  -o, --out DIR            where an opened answer's files are written (made if missing; each under its own name,
                           made safe); --force lets them replace files of the same name

open options:
  -o, --out PATH           write the text to PATH (a new file, mode 600) instead of standard output; for a note
                           with files, PATH is a directory (made if missing): each file is written there under
                           its own name (made safe), the text goes to standard output
      --force              let files of the note replace files of the same name in the --out directory
                           (otherwise they are written as "name (2).ext")
      --passcode-file PATH read the note's passcode from PATH (asked on the terminal otherwise)

receipts options:
  -o, --out PATH           export: the file to write (a new file, mode 600)
      --keys PATH          verify: the receipt key set you saved from the service you trust

verify-site options:
      --manifest PATH      a release manifest (vanish-release.json) you trust; may be given more than once

  -h, --help               this text
      --version            the client's version

Environment: VANISH_URL (the server for create), VANISH_PASSCODE (a passcode, for create and open),
VANISH_CONFIG_DIR (where RECEIPTS_FILE lives: default $XDG_CONFIG_HOME/vanish or ~/.config/vanish; macOS
~/Library/Application Support/vanish; Windows %APPDATA%\\vanish), RECEIPTS_FILE = that folder's receipts.json.
Passcodes are never taken on the command line (ps shows it to every user): --passcode is refused.
Plain http:// is refused except to localhost, 127.0.0.1 and [::1].
A link given as an argument shows in ps too: on a shared machine, use "vanish open -" and give it on stdin.
Exit status: 0 done, 1 refused by the server or by vanish (the reason is printed), or unreachable, 2 usage.`;

const OPTIONS = {
  file: { type: 'string', short: 'f' },
  attach: { type: 'string', short: 'a', multiple: true },
  force: { type: 'boolean' },
  views: { type: 'string', short: 'v' },
  expires: { type: 'string', short: 'e' },
  type: { type: 'string', short: 't' },
  passcode: { type: 'string', short: 'p' },
  'ask-passcode': { type: 'boolean' },
  'passcode-file': { type: 'string' },
  notify: { type: 'string', short: 'n' },
  'send-link': { type: 'string', short: 's' },
  webhook: { type: 'string', short: 'w' },
  'shrink-after-first-view': { type: 'string' },
  'available-from': { type: 'string' },
  'release-after-silence': { type: 'string' },
  server: { type: 'string' },
  json: { type: 'boolean' },
  out: { type: 'string', short: 'o' },
  keys: { type: 'string' },
  manifest: { type: 'string', multiple: true },
  label: { type: 'string' },
  count: { type: 'string' },
  days: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'key-file': { type: 'string' },
  'allow-files': { type: 'boolean' },
  open: { type: 'string' },
  all: { type: 'boolean' },
  close: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
};
const COMMAND_OPTIONS = {
  create: ['file', 'attach', 'views', 'expires', 'type', 'ask-passcode', 'passcode-file', 'notify', 'send-link', 'webhook', 'server', 'json',
    'shrink-after-first-view', 'available-from', 'release-after-silence'],
  open: ['out', 'force', 'passcode-file'],
  receipts: ['out', 'keys'],
  'verify-site': ['manifest'],
  request: ['label', 'count', 'days', 'views', 'allow-files', 'notify', 'webhook', 'origin', 'key-file', 'server', 'json'],
  send: ['file', 'attach', 'json'],
  inbox: ['key-file', 'open', 'all', 'close', 'out', 'force', 'json'],
};

/** The command, its options and its arguments; a UsageError for anything else. */
function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    // `--passcode` with no value fails to parse: it is still the same mistake.
    if (/--passcode\b(?!-)/.test(err.message)) throw new UsageError(ARGV_REFUSAL);
    throw new UsageError(err.message);
  }
  const { values, positionals } = parsed;
  if (values.passcode !== undefined) throw new UsageError(ARGV_REFUSAL);
  const [command, ...rest] = positionals;
  if (values.version) return { command: 'version' };
  if (values.help || command === undefined) return { command: 'help' };
  if (!(command in COMMAND_OPTIONS)) throw new UsageError(`unknown command "${command}" (the commands are create, open, request, send, inbox, receipts and verify-site)`);
  for (const name of Object.keys(values)) {
    if (!COMMAND_OPTIONS[command].includes(name)) throw new UsageError(`--${name} is not an option of vanish ${command}`);
  }
  if (command === 'create' && rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}" (the note comes from standard input or --file)`);
  if (command === 'open' && rest.length > 1) throw new UsageError(`unexpected argument "${rest[1]}" (vanish open takes one link)`);
  if (command === 'request' && rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}" (vanish request takes options only)`);
  if ((command === 'send' || command === 'inbox') && rest.length > 1) throw new UsageError(`unexpected argument "${rest[1]}" (vanish ${command} takes one link)`);
  if (command === 'verify-site' && rest.length !== 1) throw new UsageError('vanish verify-site takes one address, such as https://vanish.example');
  if (command === 'receipts' && rest.length === 0) throw new UsageError('vanish receipts needs a command: list, export, verify or checkin');
  return { command, options: values, link: rest[0], args: rest };
}

/** Runs one command line; resolves with the exit status. `io` is { stdin, stdout, stderr, env }. */
async function run(argv, io) {
  try {
    const line = parseCommandLine(argv);
    if (line.command === 'version') io.stdout.write(`${VERSION}\n`);
    else if (line.command === 'help') io.stdout.write(`${USAGE}\n`);
    else if (line.command === 'create') await create(line.options, io);
    else if (line.command === 'receipts') await receipts(line.args[0], line.options, line.args.slice(1), io);
    else if (line.command === 'verify-site') await verifySite(line.options, line.link, io);
    else if (line.command === 'request') await request(line.options, io);
    else if (line.command === 'send') await sendTo(line.options, line.link, io);
    else if (line.command === 'inbox') await inbox(line.options, line.link, io);
    else await open(line.options, line.link, io);
    return 0;
  } catch (err) {
    io.stderr.write(`vanish: ${err.message}\n`);
    if (err instanceof UsageError) {
      io.stderr.write('Try "vanish --help".\n');
      return 2;
    }
    if (!(err instanceof Refusal)) io.stderr.write('(an unexpected error: please report it)\n');
    return 1;
  }
}

module.exports = { run, parseCommandLine, USAGE };
