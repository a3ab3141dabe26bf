'use strict';
// Loaded with `node --require` by tests that bound a process's memory: at exit, its peak resident set size
// goes to stderr as `max-rss-kb=N` (process.resourceUsage, the kernel's own high-water mark), and the CPU time
// it used (user + system) as `cpu-us=N`.
process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write(`\nmax-rss-kb=${usage.maxRSS}\ncpu-us=${usage.userCPUTime + usage.systemCPUTime}\n`);
});
