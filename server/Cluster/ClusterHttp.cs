using System.Net.Security;
using System.Net.WebSockets;
using System.Security.Cryptography.X509Certificates;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// How a node speaks to the others (Raft's requests, the checks before adding a node, the join
/// requests). On a secured server it presents its own server certificate as its client
/// certificate (a node's certificate is ClusterAdmin on its own server, and on the others when they
/// share it or register it), and accepts another node's server certificate when it is the same
/// certificate or one the machine's trust store validates.
/// </summary>
internal sealed class ClusterHttp : IHttpMessageHandlerFactory
{
    private readonly Func<X509Certificate2?> _certificate;
    private readonly TimeSpan _connectTimeout;

    /// <param name="certificate">This server's current certificate; null on an unsecured server.</param>
    public ClusterHttp(Func<X509Certificate2?> certificate, TimeSpan connectTimeout)
    {
        _certificate = certificate;
        _connectTimeout = connectTimeout;
    }

    /// <summary>This server's current certificate; null on an unsecured server.</summary>
    public X509Certificate2? Certificate => _certificate();

    public HttpMessageHandler CreateHandler(string name) => CreateHandler();

    public SocketsHttpHandler CreateHandler()
    {
        var handler = new SocketsHttpHandler { ConnectTimeout = _connectTimeout, PooledConnectionLifetime = TimeSpan.FromMinutes(5) };
        if (_certificate() is not null)
        {
            handler.SslOptions = new SslClientAuthenticationOptions
            {
                // Asked at each handshake: a replaced server certificate is presented from then on.
                LocalCertificateSelectionCallback = (_, _, _, _, _) => _certificate()!,
                RemoteCertificateValidationCallback = (_, remote, _, errors) =>
                    errors == SslPolicyErrors.None
                    || (remote is not null && _certificate() is { } own && remote.GetCertHashString() == own.GetCertHashString()),
            };
        }
        return handler;
    }

    public HttpClient CreateClient(TimeSpan timeout) => new(CreateHandler()) { Timeout = timeout };

    /// <summary>
    /// The same rules for replication's WebSockets (<c>ReplicationHub.ConfigureSocket</c>): this
    /// server's certificate presented as the client certificate (read at each connection, so a
    /// replaced one is used), and another node's accepted as for Raft's requests. Null on an
    /// unsecured server.
    /// </summary>
    public static Action<ClientWebSocketOptions>? SocketOptions(Func<X509Certificate2?> certificate) => certificate() is null
        ? null
        : options =>
        {
            if (certificate() is { } current)
            {
                options.ClientCertificates = [current];
            }
            options.RemoteCertificateValidationCallback = (_, remote, _, errors) =>
                errors == SslPolicyErrors.None
                || (remote is not null && certificate() is { } own && remote.GetCertHashString() == own.GetCertHashString());
        };
}
