'use strict';
// Loaded with `node --require` by tests that bound a process's memory: at exit, its peak resident set size
// goes to stderr as `max-rss-kb=N` (process.resourceUsage, the kernel's own high-water mark).
process.on('exit', () => {
  process.stderr.write(`\nmax-rss-kb=${process.resourceUsage().maxRSS}\n`);
});
