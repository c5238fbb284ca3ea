import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataPath, repositoryRoot } from '../src/data-dir.js';

const root = mkdtempSync(path.join(tmpdir(), 'data-dir-'));
const workspace = path.join(root, 'services/exchange');
mkdirSync(workspace, { recursive: true });
writeFileSync(path.join(root, 'package.json'), JSON.stringify({ workspaces: ['services/*'] }));
writeFileSync(path.join(workspace, 'package.json'), JSON.stringify({ name: 'exchange' }));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('one data folder rule', () => {
  it('defaults to <repository root>/data/<service> from the root and from a workspace', () => {
    expect(repositoryRoot(workspace)).toBe(root);
    expect(dataPath(undefined, 'exchange', {}, root)).toBe(path.join(root, 'data/exchange'));
    expect(dataPath('', 'exchange', {}, workspace)).toBe(path.join(root, 'data/exchange'));
    // `npm run x -w services/exchange` from the root: cwd the workspace, INIT_CWD the root.
    expect(dataPath(undefined, 'exchange', { INIT_CWD: root }, workspace)).toBe(
      path.join(root, 'data/exchange'),
    );
  });

  it('uses the folder itself outside a repository, and explicit paths as typed', () => {
    expect(dataPath(undefined, 'paygate', {}, '/srv')).toBe('/srv/data/paygate');
    expect(dataPath('/abs/x', 'paygate', { INIT_CWD: root }, workspace)).toBe('/abs/x');
    expect(dataPath('mine', 'paygate', { INIT_CWD: root }, workspace)).toBe(path.join(root, 'mine'));
    expect(dataPath('mine', 'paygate', {}, workspace)).toBe(path.join(workspace, 'mine'));
  });
});
