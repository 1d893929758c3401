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

    private SecuredServer(InProcessServer server, TempFolder certificates, X509Certificate2 serverCertificate, string certificatePath, string? keyPath)
    {
        Server = server;
        _certificates = certificates;
        ServerCertificate = serverCertificate;
        CertificatePath = certificatePath;
        KeyPath = keyPath;
        Url = server.Host.Urls.Single();
        Admin = Client(serverCertificate);
    }

    public InProcessServer Server { get; }

    public string Url { get; }

    /// <summary>The server certificate as first loaded (with its key; also a ClusterAdmin client certificate).</summary>
    public X509Certificate2 ServerCertificate { get; }

    /// <summary>The server certificate's file: a PFX (password "secret"), or a PEM certificate whose key is at <see cref="KeyPath"/>.</summary>
    public string CertificatePath { get; }

    /// <summary>The PEM key's file; null for a PFX.</summary>
    public string? KeyPath { get; }

    public string CertificateFolder => _certificates.Path;

    /// <summary>A client presenting the server's own certificate: ClusterAdmin.</summary>
    public HttpClient Admin { get; }

    public ServerSecurity Security => Server.Host.Server.Security!;

    public static Task<SecuredServer> StartAsync(params string[] extraArgs) => StartAsync(TestCertificates.Server(), pem: false, extraArgs);

    /// <summary>A server presenting <paramref name="certificate"/>, written as a PFX or as PEM certificate and key files.</summary>
    public static async Task<SecuredServer> StartAsync(X509Certificate2 certificate, bool pem, params string[] extraArgs)
    {
        var folder = new TempFolder("jackdaw-certs");
        string path;
        string? keyPath = null;
        string[] files;
        if (pem)
        {
            (path, keyPath) = TestCertificates.WritePem(certificate, folder.Path, "server");
            files = ["--Security:Certificate:Path", path, "--Security:Certificate:KeyPath", keyPath];
        }
        else
        {
            path = TestCertificates.WritePfx(certificate, Path.Combine(folder.Path, "server.pfx"), "secret");
            files = ["--Security:Certificate:Path", path, "--Security:Certificate:Password", "secret"];
        }
        var server = await InProcessServer.StartAsync(["--urls", "https://127.0.0.1:0", .. files, .. extraArgs]);
        return new SecuredServer(server, folder, certificate, path, keyPath);
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
