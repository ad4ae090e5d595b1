#!/bin/sh
sudo mkfs.ext4 -F /dev/sda1
