// Unit tests of the pure parts of approvals.js, run by `node --test` from
// TestWebShellModules (modules_test.go).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approvalEndText, approvalName, approvalOrigin, approvalResultText, approvalRole } from '../../assets/approvals.js';

test('approvalName names a tool call by server and tool', () => {
  assert.deepEqual(approvalName({ server: 'files', tool: 'write_file' }), { name: 'files.write_file', what: 'call' });
  assert.deepEqual(approvalName({ op: '', server: 'files', tool: 'w' }), { name: 'files.w', what: 'call' });
});

test('approvalName names another operation by what it is about', () => {
  assert.deepEqual(approvalName({ op: 'resources/read', server: 'files', tool: 'file:///etc/hosts' }),
    { name: 'resources/read files: file:///etc/hosts', what: 'request' });
  assert.deepEqual(approvalName({ op: 'prompts/get', server: 'ops', tool: 'deploy' }),
    { name: 'prompts/get ops: deploy', what: 'request' });
});

test('approvalName survives what a server or a bug could send', () => {
  for (const a of [null, {}, { server: 3, tool: {} }, { op: 7 }]) {
    assert.equal(typeof approvalName(a).name, 'string');
  }
});

test('approvalRole: the caller answers its own call unless the rule names approvers', () => {
  assert.deepEqual(approvalRole({ principal: 'bob', canAnswer: true }, 'bob'),
    { canAnswer: true, mine: true, principal: 'bob', waiting: '' });
  const own = approvalRole({ principal: 'bob', approvers: ['security'], canAnswer: false }, 'bob');
  assert.equal(own.canAnswer, false);
  assert.equal(own.mine, true);
  assert.match(own.waiting, /approver \(security\)/);
  const approver = approvalRole({ principal: 'bob', approvers: ['security'], canAnswer: true }, 'carol');
  assert.equal(approver.canAnswer, true);
  assert.equal(approver.mine, false);
  const admin = approvalRole({ principal: 'bob', approvers: ['security', 'dave'], canAnswer: false }, 'alice');
  assert.match(admin.waiting, /security, dave/);
  assert.match(admin.waiting, /admin/);
});

test('approvalRole answers nothing it is not told it may', () => {
  for (const a of [null, {}, { canAnswer: 'true' }, { canAnswer: 1, principal: 7, approvers: 'x' }]) {
    const r = approvalRole(a, 'bob');
    assert.equal(r.canAnswer, false);
    assert.equal(typeof r.waiting, 'string');
  }
});

test('approvalEndText tells of an approval that ended without an answer', () => {
  assert.match(approvalEndText({ server: 'files', tool: 'write_file' }, 'cancelled'), /files\.write_file.*cancelled, or its client went away/);
  assert.match(approvalEndText({ op: 'resources/read', server: 'f', tool: 'u' }, 'expired'), /Nobody answered in time/);
  assert.equal(approvalEndText({ server: 'f', tool: 't' }, 'approved'), '');
  assert.equal(approvalEndText(null, undefined), '');
});

test('approvalOrigin says where the call came from', () => {
  assert.equal(approvalOrigin({ origin: 'api' }), 'From the CLI or another API client.');
  assert.equal(approvalOrigin({ origin: 'gateway', client: 'claude-code' }), 'From the gateway client claude-code.');
  assert.equal(approvalOrigin({ origin: 'gateway' }), 'From a client of the gateway.');
  assert.equal(approvalOrigin({ origin: 'user' }), 'From the WebShell.');
  assert.equal(approvalOrigin({ origin: 'app', server: 'revenue' }), 'Requested by the MCP App of server revenue.');
  assert.equal(approvalOrigin({}), '');
  assert.equal(approvalOrigin(null), '');
});

test('approvalResultText says what became of an answered call', () => {
  const a = { server: 'files', tool: 'write_file' };
  assert.equal(approvalResultText(a, 'approved'), 'Approved — files.write_file is running.');
  assert.equal(approvalResultText(a, 'approved', { status: 'ok', durationMs: 12.4 }), 'Approved — files.write_file ok (12 ms).');
  assert.equal(approvalResultText(a, 'approved', { status: 'error', error: 'EOF', durationMs: 3 }), 'Approved — the call files.write_file failed (3 ms): EOF.');
  assert.equal(approvalResultText(a, 'denied'), 'Denied — files.write_file was not run.');
  assert.equal(approvalResultText({ op: 'resources/read', server: 'f', tool: 'u' }, 'approved'), 'Approved — resources/read f: u.');
  assert.equal(approvalResultText(a, 'expired'), '');
});
