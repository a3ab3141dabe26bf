// The relay floor of `npm run bench` and services/gateway/bench/hop-ab.sh: node:http in front, undici's pooled
// client behind, relaying to UPSTREAM_URL and doing nothing else (no limits, headers, ids, logs or metrics): the
// least any Node gateway costs on this machine (docs/performance.md). Listens on 127.0.0.1:PORT.
const http = require('node:http');
const { Agent } = require('undici');
const agent = new Agent({ keepAliveTimeout: 4000 });
const origin = process.env.UPSTREAM_URL;
http.createServer((req, res) => {
  agent.dispatch({ origin, path: req.url, method: req.method, headers: {} }, {
    onRequestStart() {},
    onResponseStart(_c, status, headers) { res.writeHead(status, { 'content-type': headers['content-type'], 'content-length': headers['content-length'] }); },
    onResponseData(_c, chunk) { res.write(chunk); },
    onResponseEnd() { res.end(); },
    onResponseError(_c, err) { res.statusCode = 502; res.end(String(err.message)); },
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
