"""llm_server.py - a scripted OpenAI-compatible chat server, for the tests only.

    llm_server.py SCRIPT.json PORTFILE LOGFILE

Serves POST /v1/chat/completions.  SCRIPT holds {"MODEL": [step, ...], ...,
"*": [step, ...]}: each request takes the next step of the queue named by
its model (else "*"); the last step of a queue repeats.  A step:

    {"content": "...", "finish": "stop", "usage": [prompt, completion],
     "status": 200, "headers": {"Retry-After": "1"}, "delay": 0.0,
     "raw": "body sent verbatim", "error": {"message": ..., "code": ...},
     "echo_auth": true, "choose": ["reply", ...],
     "stall": 0.0, "gap": 0.0, "no_stream": true}

A request that asks for a stream ("stream": true, as the client does) is
answered with server-sent events (see Handler.stream: "stall" waits after
the headers, "gap" between events); "no_stream" answers it in one piece,
as a server that ignores the flag does.

"choose" answers with the first reply whose first line does not appear in
the request's messages (the last one when all do): a model that takes "not
one of these" to heart (and, asked for the idea it "would rank number K",
the K-th of those); with "sample": SEED beside it, a random one of them
(seeded): a model that samples at a temperature and ignores the rank, so
two calls told the same list may give the same reply.  "pick" is {"TEXT": [reply, ...], ...}: the first
TEXT found in the request's messages names the list, whose replies are
given in turn (a model that writes a different kernel each time, per task).

GET /v1/models lists the script's "_models" (a server that serves those),
else answers 404 (one that cannot list them); with "_key": KEY in the
script, a request without "Authorization: Bearer KEY" gets 401, GET or
POST.  GETs are not logged.

Every request is appended to LOGFILE as one JSON line (model, messages,
temperature, max_tokens, the Authorization header, the time, and
"inflight": the requests being served when it came, itself included).
With LLM_SPANS=FILE in the environment, each answered request also
appends {"t0": came, "t1": answered, "model"} to FILE (calls in flight over time).
The chosen port is written to PORTFILE once listening.
"""
import json
import os
import random
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
lock = threading.Lock()
taken = {}
picked = {}
samplers = {}
inflight = [0]
spans = os.environ.get("LLM_SPANS")


def next_step(model):
    name = model if model in script else "*"
    queue = script.get(name) or [{"content": "ok"}]
    with lock:
        i = taken.get(name, 0)
        taken[name] = i + 1
    return queue[min(i, len(queue) - 1)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def refused(self):
        key = script.get("_key")
        if key is None or self.headers.get("Authorization") == "Bearer " + key:
            return False
        self.send_json(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
        return True

    def do_GET(self):
        if self.refused():
            return
        if not self.path.endswith("/models") or "_models" not in script:
            self.send_json(404, {"error": {"message": "not found"}})
            return
        self.send_json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in script["_models"]]})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(n)
        if self.refused():
            return
        try:
            req = json.loads(raw)
        except ValueError:
            req = {}
        auth = self.headers.get("Authorization")
        t0 = time.time()
        with lock:
            inflight[0] += 1
            with open(logfile, "a") as f:
                f.write(json.dumps({"path": self.path, "model": req.get("model"),
                                    "messages": req.get("messages"),
                                    "temperature": req.get("temperature"),
                                    "max_tokens": req.get("max_tokens"), "stream": req.get("stream"),
                                    "auth": auth, "t": t0, "inflight": inflight[0]}) + "\n")
        try:
            self.answer(req, auth)
        finally:
            with lock:
                inflight[0] -= 1
                if spans:
                    with open(spans, "a") as f:
                        f.write(json.dumps({"t0": t0, "t1": time.time(), "model": req.get("model")}) + "\n")

    def answer(self, req, auth):
        step = next_step(req.get("model"))
        if step.get("delay"):
            time.sleep(step["delay"])
        status = step.get("status", 200)
        if "raw" in step:
            body = step["raw"]
        elif status != 200:
            err = dict(step.get("error", {"message": "scripted error %d" % status}))
            if step.get("echo_auth"):
                err["message"] = "Incorrect API key provided: %s" % auth
            body = json.dumps({"error": err})
        else:
            p, c = step.get("usage", [100, 50])
            if "pick" in step:
                said = "\n".join(m.get("content", "") for m in req.get("messages") or [])
                key = next((k for k in step["pick"] if k in said), None)
                if key is not None:
                    with lock:
                        i = picked.get(key, 0)
                        picked[key] = i + 1
                    step = dict(step, content=step["pick"][key][i % len(step["pick"][key])])
            if "choose" in step:
                said = "\n".join(m.get("content", "") for m in req.get("messages") or [])
                fresh = [r for r in step["choose"] if r.split("\n")[0] not in said]
                rank = re.search(r"would rank number (\d+)", said)
                if fresh and rank and "sample" not in step:
                    choice = fresh[min(int(rank.group(1)), len(fresh)) - 1]
                elif fresh and "sample" in step:
                    with lock:
                        rng = samplers.setdefault(id(step["choose"]), random.Random(step["sample"]))
                        choice = rng.choice(fresh)
                else:
                    choice = (fresh or step["choose"])[0 if fresh else -1]
                step = dict(step, content=choice)
            usage = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
            if req.get("stream") and not step.get("no_stream"):
                self.stream(req, step, usage)
                return
            body = json.dumps({
                "id": "chatcmpl-test", "object": "chat.completion", "model": req.get("model"),
                "choices": [{"index": 0, "finish_reason": step.get("finish", "stop"),
                             "message": {"role": "assistant", "content": step.get("content", "")}}],
                "usage": usage})
        data = body.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in step.get("headers", {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


    def stream(self, req, step, usage):
        """The reply as server-sent events, in chunked encoding: the content in
        pieces of about 40 characters, "gap" seconds apart, the finish reason,
        the usage (asked for with stream_options), [DONE]; "stall" seconds
        after the headers before the first."""
        text = step.get("content", "")
        pieces = [text[i:i + 40] for i in range(0, len(text), 40)] or [""]
        base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": req.get("model")}
        events = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": t},
                                       "finish_reason": None}]) for t in pieces]
        events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": step.get("finish", "stop")}]))
        if (req.get("stream_options") or {}).get("include_usage"):
            events.append(dict(base, choices=[], usage=usage))
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            for k, v in step.get("headers", {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.flush()
            if step.get("stall"):
                time.sleep(step["stall"])
            lines = ["data: " + json.dumps(e) for e in events] + ["data: [DONE]"]
            for i, line in enumerate(lines):
                if i and step.get("gap"):
                    time.sleep(step["gap"])
                data = (line + "\n\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(portfile + ".tmp", portfile)
server.serve_forever()
