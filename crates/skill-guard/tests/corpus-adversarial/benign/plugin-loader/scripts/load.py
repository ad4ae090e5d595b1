import importlib
import sys


def load(name):
    module = importlib.import_module('plugins.' + name)
    handler = getattr(module, 'handle_' + name)
    return handler


if __name__ == '__main__':
    print(load(sys.argv[1]))
