#!/usr/bin/python3
"""A minimal Chrome DevTools Protocol client (Python 3 standard library only).

Launches a headless chromium with --remote-debugging-port=0, reads the port
it chose from DevToolsActivePort, finds the page target over HTTP
(http.client, /json/list) and talks to it over a hand-written RFC 6455
websocket client (text frames, masked as a client must; ping answered;
fragmented messages joined). No pip or npm at test time.

    with Browser() as b:
        page = b.page()
        page.call("Page.enable")
        page.call("Page.navigate", url="file:///tmp/x.html")
        page.wait_event("Page.loadEventFired", timeout=5)
"""
import base64, http.client, json, os, shutil, socket, struct, subprocess, tempfile, time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class WebSocket:
    """Client side of RFC 6455, enough for CDP: text messages in and out."""

    def __init__(self, host, port, path, timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError("websocket handshake refused: " + head.decode(errors="replace"))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, text, opcode=1):
        data = text.encode() if isinstance(text, str) else text
        head = bytes([0x80 | opcode])
        n = len(data)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i & 3] for i, b in enumerate(data))
        self.sock.sendall(head + mask + body)

    def recv(self):
        """The next text message (control frames handled here)."""
        parts = []
        while True:
            b0, b1 = self._read(2)
            fin, opcode, n = b0 & 0x80, b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i & 3] for i, b in enumerate(data))
            if opcode == 8:
                raise ConnectionError("websocket closed by the browser")
            if opcode == 9:  # ping
                self.send(data, opcode=10)
                continue
            if opcode == 10:
                continue
            parts.append(data)
            if fin:
                return b"".join(parts).decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Page:
    """One target's CDP session: commands by id, events kept in order."""

    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def _pump(self, timeout):
        self.ws.sock.settimeout(max(0.01, timeout))
        msg = json.loads(self.ws.recv())
        if "method" in msg:
            self.events.append(msg)
        return msg

    def call(self, method, timeout=30, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(method)
            msg = self._pump(left)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def wait_event(self, method, timeout=10, since=0):
        """The first event `method` at or after self.events[since]."""
        end = time.monotonic() + timeout
        seen = since
        while True:
            for e in self.events[seen:]:
                if e["method"] == method:
                    return e
            seen = len(self.events)
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(method)
            try:
                self._pump(left)
            except socket.timeout:
                raise TimeoutError(method)

    def drain(self, seconds):
        """Collects events for a while (console errors, requests)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                self._pump(end - time.monotonic())
            except (socket.timeout, TimeoutError):
                break

    def evaluate(self, expr, timeout=30):
        r = self.call("Runtime.evaluate", timeout=timeout, expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate {expr[:60]}: {r['exceptionDetails']}")
        return r["result"].get("value")


class Browser:
    def __init__(self, binary=None, width=1280, height=800):
        self.binary = binary or find_chromium()
        self.width, self.height = width, height

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="logratio-cdp-")
        args = [self.binary, "--headless", "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
                "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--hide-scrollbars", "--mute-audio", "--disable-dev-shm-usage",
                f"--window-size={self.width},{self.height}", "about:blank"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        end = time.monotonic() + 30
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if time.monotonic() > end or self.proc.poll() is not None:
                self.__exit__(None, None, None)
                raise RuntimeError("chromium did not start (no DevToolsActivePort)")
            time.sleep(0.05)
        self.port = int(open(port_file).read().split("\n")[0])
        return self

    def _json(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request("GET", path)
        body = c.getresponse().read()
        c.close()
        return json.loads(body)

    def page(self):
        end = time.monotonic() + 10
        while True:
            pages = [t for t in self._json("/json/list") if t.get("type") == "page"]
            if pages or time.monotonic() > end:
                break
            time.sleep(0.05)
        url = pages[0]["webSocketDebuggerUrl"]
        path = url.split(str(self.port), 1)[1]
        return Page(WebSocket("127.0.0.1", self.port, path))

    def __exit__(self, *exc):
        if getattr(self, "proc", None) and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
        return False
