// TEST TOOLING ONLY: a stand-in for Mailpit (Debian does not package it; nothing can be pulled here).
// It accepts any mail over SMTP on 1025 and keeps it in memory, and answers only the Mailpit HTTP API
// calls the compose test reads, in Mailpit's JSON shape: GET /api/v1/messages, GET /api/v1/message/{ID},
// GET /readyz. Users run the real Mailpit (docker-compose.yml).
'use strict';
const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { SMTPServer } = require('smtp-server');
const { simpleParser } = require('mailparser');

const messages = [];
const addresses = (field) => (field?.value ?? []).map((a) => ({ Name: a.name ?? '', Address: a.address ?? '' }));

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  onData(stream, _session, callback) {
    simpleParser(stream).then((mail) => {
      messages.unshift({
        ID: randomUUID(),
        MessageID: mail.messageId ?? '',
        From: addresses(mail.from)[0] ?? { Name: '', Address: '' },
        To: addresses(mail.to),
        Subject: mail.subject ?? '',
        Created: new Date().toISOString(),
        Text: mail.text ?? '',
        HTML: typeof mail.html === 'string' ? mail.html : '',
      });
      callback();
    }, callback);
  },
});
smtp.listen(1025, '0.0.0.0');

const summary = ({ Text, HTML, ...rest }) => ({ ...rest, Snippet: Text.slice(0, 250) });
const send = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://stand-in');
  if (url.pathname === '/readyz' || url.pathname === '/livez') return send(res, 200, 'ok');
  if (url.pathname === '/api/v1/messages') {
    return send(res, 200, { total: messages.length, unread: messages.length, count: messages.length, messages: messages.map(summary) });
  }
  const one = /^\/api\/v1\/message\/([^/]+)$/.exec(url.pathname);
  if (one) {
    const message = messages.find((m) => m.ID === one[1]);
    return message ? send(res, 200, message) : send(res, 404, 'not found');
  }
  if (url.pathname === '/') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return res.end(`Mailpit stand-in (test tooling): ${messages.length} message(s); see /api/v1/messages\n`);
  }
  send(res, 404, 'not found');
}).listen(8025, '0.0.0.0');
console.log('mailpit stand-in (test tooling): SMTP on 1025, HTTP API on 8025');
process.on('SIGTERM', () => process.exit(0));
