using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Security;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// A secured server's listening addresses: TLS through Kestrel's per-connection callback, so that
/// each handshake presents the certificate current at that moment. A connection middleware in
/// front of TLS gives every connection a <see cref="TlsConnection"/>: the handshake puts the
/// certificate it counted there, and the middleware releases it when the connection ends (the last
/// connection of a replaced certificate disposes it).
/// </summary>
internal static class HttpsEndpoints
{
    /// <summary>How long a client may take to finish its TLS handshake before it is dropped (a client that connects and sends nothing).</summary>
    public static readonly TimeSpan HandshakeTimeout = TimeSpan.FromSeconds(10);

    public static void Listen(KestrelServerOptions kestrel, string url, Func<ServerSecurity> security)
    {
        var address = Microsoft.AspNetCore.Http.BindingAddress.Parse(url);
        var tls = new TlsHandshakeCallbackOptions
        {
            OnConnection = context => Handshake(context, security()),
            HandshakeTimeout = HandshakeTimeout,
        };
        void Configure(ListenOptions listen)
        {
            listen.Use(next => connection => Track(next, connection));
            listen.UseHttps(tls);
        }

        var host = address.Host;
        if (host.Equals("localhost", StringComparison.OrdinalIgnoreCase))
        {
            kestrel.ListenLocalhost(address.Port, Configure);
        }
        else if (host is "*" or "+" or "0.0.0.0")
        {
            kestrel.ListenAnyIP(address.Port, Configure);
        }
        else if (IPAddress.TryParse(host.Trim('[', ']'), out var ip))
        {
            kestrel.Listen(ip, address.Port, Configure);
        }
        else
        {
            throw new InvalidOperationException($"Urls '{url}' names host '{host}': a secured server listens on an IP address (https://0.0.0.0:443 for every interface) or localhost; clients may use any name the certificate carries.");
        }
    }

    private static async Task Track(ConnectionDelegate next, ConnectionContext connection)
    {
        var tls = new TlsConnection();
        connection.Features.Set(tls);
        try
        {
            await next(connection).ConfigureAwait(false);
        }
        finally
        {
            tls.Release();
        }
    }

    private static ValueTask<SslServerAuthenticationOptions> Handshake(TlsHandshakeCallbackContext context, ServerSecurity security)
    {
        var tls = context.Connection.Features.Get<TlsConnection>()
            ?? throw new InvalidOperationException("A TLS connection reached its handshake without the tracking middleware.");
        var certificate = security.Certificate.Acquire();
        tls.Hold(certificate);
        return ValueTask.FromResult(new SslServerAuthenticationOptions
        {
            ServerCertificateContext = certificate.Context,
            // Asked for at the handshake (HTTP/2 forbids renegotiation); a client without one still
            // connects and is answered 401 with a message, rather than a bare TLS alert.
            ClientCertificateRequired = true,
            RemoteCertificateValidationCallback = AcceptAny,
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        });
    }

    /// <summary>
    /// Every client certificate passes the handshake: who it is and what it may do is decided per
    /// request against the registered certificates (by thumbprint, or public key and issuer), not by
    /// a chain of trust. The handshake itself proves the client holds the key.
    /// </summary>
    private static readonly RemoteCertificateValidationCallback AcceptAny = static (_, _, _, _) => true;
}

/// <summary>One TLS connection's server certificate (counted while it lives) and its cached caller.</summary>
public sealed class TlsConnection
{
    private ServerCertificate? _certificate;

    public ConnectionIdentity Identity { get; } = new();

    internal void Hold(ServerCertificate certificate) =>
        Interlocked.Exchange(ref _certificate, certificate)?.Release();

    internal void Release() => Interlocked.Exchange(ref _certificate, null)?.Release();
}
