mod mock_server;
