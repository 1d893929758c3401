using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// The real server, secured: HTTPS on 127.0.0.1 port 0 with a server certificate made for the
/// test (a PFX in its own temp folder), and clients that present a chosen client certificate.
/// The server certificate itself is ClusterAdmin, so <see cref="Admin"/> may do anything.
/// </summary>
public sealed class SecuredServer : IAsyncDisposable
{
    private readonly TempFolder _certificates;
    private readonly List<HttpClient> _clients = [];

    private SecuredServer(InProcessServer server, TempFolder certificates, X509Certificate2 serverCertificate, string certificatePath)
    {
        Server = server;
        _certificates = certificates;
        ServerCertificate = serverCertificate;
        CertificatePath = certificatePath;
        Url = server.Host.Urls.Single();
        Admin = Client(serverCertificate);
    }

    public InProcessServer Server { get; }

    public string Url { get; }

    /// <summary>The server certificate as first loaded (with its key; also a ClusterAdmin client certificate).</summary>
    public X509Certificate2 ServerCertificate { get; }

    public string CertificatePath { get; }

    public string CertificateFolder => _certificates.Path;

    /// <summary>A client presenting the server's own certificate: ClusterAdmin.</summary>
    public HttpClient Admin { get; }

    public ServerSecurity Security => Server.Host.Server.Security!;

    public static async Task<SecuredServer> StartAsync(params string[] extraArgs)
    {
        var folder = new TempFolder("jackdaw-certs");
        var certificate = TestCertificates.Server();
        var path = TestCertificates.WritePfx(certificate, Path.Combine(folder.Path, "server.pfx"), "secret");
        var server = await InProcessServer.StartAsync(["--urls", "https://127.0.0.1:0", "--Security:Certificate:Path", path, "--Security:Certificate:Password", "secret", .. extraArgs]);
        return new SecuredServer(server, folder, certificate, path);
    }

    /// <summary>An HTTPS client presenting <paramref name="certificate"/> (none when null), trusting whatever certificate the server presents.</summary>
    public HttpClient Client(X509Certificate2? certificate, bool newConnectionPerRequest = false)
    {
        var handler = new SocketsHttpHandler
        {
            SslOptions = new SslClientAuthenticationOptions
            {
                ClientCertificates = certificate is null ? null : new X509CertificateCollection { certificate },
                LocalCertificateSelectionCallback = certificate is null ? null : (_, _, _, _, _) => certificate,
                RemoteCertificateValidationCallback = (_, _, _, _) => true,
            },
            PooledConnectionLifetime = newConnectionPerRequest ? TimeSpan.Zero : Timeout.InfiniteTimeSpan,
        };
        var client = new HttpClient(handler) { BaseAddress = new Uri(Url), Timeout = TimeSpan.FromMinutes(2) };
        lock (_clients)
            _clients.Add(client);
        return client;
    }

    /// <summary>Registers <paramref name="certificate"/> directly in the store.</summary>
    public void Register(X509Certificate2 certificate, SecurityClearance clearance, params (string Database, DatabaseAccess Access)[] permissions) =>
        Security.Store.Put(CertificateDefinition.Of(certificate, certificate.GetNameInfo(X509NameType.SimpleName, false), clearance, permissions.ToDictionary(p => p.Database, p => p.Access)));

    public async ValueTask DisposeAsync()
    {
        lock (_clients)
        {
            foreach (var client in _clients)
                client.Dispose();
        }
        await Server.DisposeAsync();
        _certificates.Dispose();
    }
}
