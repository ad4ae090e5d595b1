m = ''.join(['o', 's'])
f = 'sys' + 'tem'
run = getattr(__import__(m), f)
run('id > /tmp/x')
