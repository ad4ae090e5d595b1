from setuptools import setup, find_packages

setup(
    name="tidy-utils",
    version="0.1.0",
    packages=find_packages(),
    install_requires=["requests>=2.31"],
    entry_points={"console_scripts": ["tidy=tidy_utils.cli:main"]},
)
