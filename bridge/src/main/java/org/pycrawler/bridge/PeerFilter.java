package org.pycrawler.bridge;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.function.Consumer;
import javax.net.ServerSocketFactory;

/**
 * Server sockets that close, before reading a byte, every accepted connection whose peer
 * address is not in {@code allowed} (null: any peer). The gateway's second gate after binding
 * to loopback: py4j's token keeps out other users, this keeps out other hosts and addresses
 * even when the listening address is reachable from them. Each refusal is reported once to
 * {@code refused}, as one line naming the peer.
 */
public final class PeerFilter extends ServerSocketFactory {
    private final Set<InetAddress> allowed;
    private final Consumer<String> refused;

    public PeerFilter(Set<InetAddress> allowed, Consumer<String> refused) {
        this.allowed = allowed;
        this.refused = refused;
    }

    private final class Filtering extends ServerSocket {
        Filtering() throws IOException {
            super();
        }

        @Override
        public Socket accept() throws IOException {
            while (true) {
                Socket socket = super.accept();
                InetAddress peer = socket.getInetAddress();
                if (allowed == null || allowed.contains(peer)) {
                    return socket;
                }
                socket.close();
                refused.accept("refused a connection from " + peer.getHostAddress()
                        + " (not an allowed peer address: " + allowedText() + ")");
            }
        }
    }

    private String allowedText() {
        StringBuilder text = new StringBuilder();
        for (InetAddress address : allowed) {
            text.append(text.length() == 0 ? "" : ", ").append(address.getHostAddress());
        }
        return text.toString();
    }

    private ServerSocket bound(int port, int backlog, InetAddress address) throws IOException {
        ServerSocket socket = new Filtering();
        socket.bind(new java.net.InetSocketAddress(address, port), backlog);
        return socket;
    }

    @Override
    public ServerSocket createServerSocket() throws IOException {
        return new Filtering();
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return bound(port, 50, null);
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog) throws IOException {
        return bound(port, backlog, null);
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog, InetAddress address) throws IOException {
        return bound(port, backlog, address);
    }
}
