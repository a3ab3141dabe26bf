// Suites that start processes, servers or browsers: a test or hook without a bound of its own may take
// 30 s before jest calls it hung, instead of jest's 5 s default, which CI passed now and then on a busy
// two-core machine (a hook running migrations, 50 MB of request bodies). A file's own jest.setTimeout and a
// test's own bound still win.
jest.setTimeout(30_000);
