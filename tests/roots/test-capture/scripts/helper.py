GREETING = "hello from the program"
