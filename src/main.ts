#!/usr/bin/env bun
// Elysia reads NODE_ENV as it loads, so it is set before the rest of the program is imported:
// the shipped program runs in production mode unless told otherwise. (No top-level await: the
// bytecode build does not allow it.)
process.env.NODE_ENV ??= "production";
void import("./cli/index").then(({ run }) => run(process.argv.slice(2)));
