"""Prints its thoughts on standard output (they belong on standard error)."""

from _base import first_legal, send, serve


def answer(request):
    send(f"thinking about request {request['id']}...")
    return first_legal(request)


serve(answer)
