#!/usr/bin/env node
// The `plaza` command. Plaza is TypeScript run through tsx's loader, so `npm start` works right
// after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
await main(process.argv, process.env);
