"""Lua scripts of the Redis store (package data, loaded by name from redis_store)."""
