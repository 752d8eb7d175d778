package org.pycrawler.bridge;

import static org.junit.Assert.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.Test;

/**
 * The contract of {@link PeerFilter}: a connection from an allowed peer address is handed to
 * the server; one from any other address is closed before a byte is read, and reported in one
 * line; with no list, every peer gets in.
 */
public class PeerFilterTest {
    private final List<String> refused = new CopyOnWriteArrayList<>();

    private ServerSocket listen(Set<InetAddress> allowed) throws IOException {
        return new PeerFilter(allowed, refused::add).createServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
    }

    /** A connection to {@code server} from the local address {@code from}. */
    private static Socket connect(ServerSocket server, String from) throws IOException {
        Socket socket = new Socket();
        socket.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
        socket.connect(new InetSocketAddress(server.getInetAddress(), server.getLocalPort()), 5_000);
        socket.setSoTimeout(5_000);
        return socket;
    }

    /** Whether the server closed {@code socket}: end of stream, or a reset. */
    private static boolean closedByServer(Socket socket) throws IOException {
        try (InputStream in = socket.getInputStream()) {
            return in.read() == -1;
        } catch (SocketException reset) {
            return true;
        }
    }

    @Test
    public void aLoopbackPeerIsAcceptedAndAnotherAddressIsRefused() throws Exception {
        try (ServerSocket server = listen(Collections.singleton(InetAddress.getByName("127.0.0.1")));
                Socket stranger = connect(server, "127.0.0.2");
                Socket local = connect(server, "127.0.0.1")) {
            try (Socket accepted = server.accept()) {   // the stranger, queued first, is skipped
                assertEquals(local.getLocalPort(), accepted.getPort());
                assertEquals("127.0.0.1", accepted.getInetAddress().getHostAddress());
            }
            assertEquals(true, closedByServer(stranger));
            assertEquals(List.of("refused a connection from 127.0.0.2 (not an allowed peer address: 127.0.0.1)"),
                    refused);
        }
    }

    @Test
    public void withoutAListEveryPeerGetsIn() throws Exception {
        try (ServerSocket server = listen(null);
                Socket other = connect(server, "127.0.0.2");
                Socket accepted = server.accept()) {
            assertEquals("127.0.0.2", accepted.getInetAddress().getHostAddress());
            assertEquals(other.getLocalPort(), accepted.getPort());
            assertEquals(List.of(), refused);
        }
    }
}
