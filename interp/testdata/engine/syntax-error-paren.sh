echo ok; ( echo x
