const [major] = process.versions.node.split('.').map(Number);
if (major < 18) {
  console.error('Node 18 or newer is required');
  process.exit(1);
}
