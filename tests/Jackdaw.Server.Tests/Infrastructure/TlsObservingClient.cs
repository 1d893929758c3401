using System.Collections.Concurrent;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// An HTTP client to a secured server that does the TLS itself, in SocketsHttpHandler's
/// <c>ConnectCallback</c>, so that a test sees every handshake: what <c>clock</c> read just before
/// the connection was opened (e.g. how many certificate replacements had returned), and which
/// server certificate the handshake was shown (its validation callback). The handler speaks plain
/// HTTP/1.1 over the stream it is given (its base address is <c>http://</c>): one TLS layer, ours.
/// Keep-alive: one connection, reused for every request; otherwise a new connection (a full
/// handshake) for each request.
/// </summary>
public sealed class TlsObservingClient : IDisposable
{
    private readonly X509Certificate2 _clientCertificate;
    private readonly Func<long> _clock;
    private readonly ConcurrentQueue<Handshake> _handshakes = new();
    private int _connects;

    public TlsObservingClient(string httpsUrl, X509Certificate2 clientCertificate, bool keepAlive, Func<long>? clock = null)
    {
        _clientCertificate = clientCertificate;
        _clock = clock ?? (() => 0);
        var handler = new SocketsHttpHandler
        {
            ConnectCallback = ConnectAsync,
            MaxConnectionsPerServer = keepAlive ? 1 : int.MaxValue,
            PooledConnectionLifetime = keepAlive ? Timeout.InfiniteTimeSpan : TimeSpan.Zero,
        };
        var address = new UriBuilder(httpsUrl) { Scheme = Uri.UriSchemeHttp }.Uri;
        Http = new HttpClient(handler) { BaseAddress = address, Timeout = TimeSpan.FromMinutes(2) };
    }

    /// <summary>One TLS handshake: <see cref="Before"/> is what the clock read before the connection was opened.</summary>
    public readonly record struct Handshake(long Before, string Thumbprint);

    public HttpClient Http { get; }

    /// <summary>Connections opened (each with a completed handshake).</summary>
    public int Connects => Volatile.Read(ref _connects);

    public IReadOnlyList<Handshake> Handshakes => _handshakes.ToArray();

    /// <summary>The server certificate the latest handshake was shown.</summary>
    public string? LastThumbprint => _handshakes.LastOrDefault().Thumbprint;

    private async ValueTask<Stream> ConnectAsync(SocketsHttpConnectionContext context, CancellationToken cancellationToken)
    {
        // Read before the connection is opened: the server picks its certificate after it accepts
        // the connection, so whatever the clock counted by now happened before that choice.
        var before = _clock();
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        Stream? stream = null;
        try
        {
            await socket.ConnectAsync(context.DnsEndPoint, cancellationToken);
            stream = new NetworkStream(socket, ownsSocket: true);
            string? presented = null;
            var tls = new SslStream(stream);
            stream = tls;
            await tls.AuthenticateAsClientAsync(
                new SslClientAuthenticationOptions
                {
                    TargetHost = "localhost",
                    ClientCertificates = [_clientCertificate],
                    LocalCertificateSelectionCallback = (_, _, _, _, _) => _clientCertificate,
                    RemoteCertificateValidationCallback = (_, certificate, _, _) =>
                    {
                        presented = certificate?.GetCertHashString();
                        return presented is not null;
                    },
                },
                cancellationToken);
            _handshakes.Enqueue(new Handshake(before, presented!));
            Interlocked.Increment(ref _connects);
            return tls;
        }
        catch
        {
            if (stream is null)
            {
                socket.Dispose();
            }
            else
            {
                await stream.DisposeAsync();
            }
            throw;
        }
    }

    public void Dispose() => Http.Dispose();
}
