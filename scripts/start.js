#!/usr/bin/env node
'use strict';
/**
 * `npm start`: builds dist/ only when it is missing or older than its sources (scripts/build.js, the
 * same check), then runs dist/main.js, both in this one process. A `prestart` script cost a shell and
 * a second Node.js start (about 0.1 CPU s) before the service's own start even began (issue 33: a
 * restart of the embedded default listens within 3 s).
 */
const { build } = require('./build');

const code = build(['--if-stale']);
if (code !== 0) process.exitCode = code;
else require('../dist/main.js');
