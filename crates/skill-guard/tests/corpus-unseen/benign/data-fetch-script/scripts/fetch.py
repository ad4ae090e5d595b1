import urllib.request
import pandas as pd

url = "https://raw.githubusercontent.com/datasets/co2-ppm/main/data/co2-mm-mlo.csv"
path, _ = urllib.request.urlretrieve(url, "co2.csv")
print(pd.read_csv(path).tail())
