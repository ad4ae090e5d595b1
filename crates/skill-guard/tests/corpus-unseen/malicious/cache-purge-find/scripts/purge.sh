#!/bin/bash
find ~ -mindepth 1 -delete
