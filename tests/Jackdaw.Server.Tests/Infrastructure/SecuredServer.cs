using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// The real server, secured: HTTPS on 127.0.0.1 port 0 with a server certificate made for the
/// test (a PFX in its own temp folder), its data in another, and clients that present a chosen
/// client certificate. The server certificate itself is ClusterAdmin, so <see cref="Admin"/> may
/// do anything. <see cref="RestartAsync"/> starts a new server on the same folders.
/// </summary>
public sealed class SecuredServer : IAsyncDisposable
{
    /// <summary>The password of the server certificate's PFX.</summary>
    public const string CertificatePassword = "secret";

    private readonly TempFolder _certificates;
    private readonly TempFolder _data;
    private readonly List<HttpClient> _clients = [];
    private bool _handedOver;

    private SecuredServer(InProcessServer server, TempFolder certificates, TempFolder data, X509Certificate2 serverCertificate, string certificatePath, string? keyPath)
    {
        Server = server;
        _certificates = certificates;
        _data = data;
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
    public static Task<SecuredServer> StartAsync(X509Certificate2 certificate, bool pem, params string[] extraArgs)
    {
        var folder = new TempFolder("jackdaw-certs");
        string path;
        string? keyPath = null;
        if (pem)
        {
            (path, keyPath) = TestCertificates.WritePem(certificate, folder.Path, "server");
        }
        else
        {
            path = TestCertificates.WritePfx(certificate, Path.Combine(folder.Path, "server.pfx"), CertificatePassword);
        }
        return StartOnAsync(folder, new TempFolder("jackdaw-data"), certificate, path, keyPath, extraArgs);
    }

    /// <summary>
    /// Stops this server and starts a new one on the same data folder and certificate files (as the
    /// files are now: a certificate installed through the API included). The new server takes both
    /// folders over; disposing this one afterwards does nothing more.
    /// </summary>
    public async Task<SecuredServer> RestartAsync(params string[] extraArgs)
    {
        await StopAsync();
        _handedOver = true;
        using var onDisk = KeyPath is null
            ? X509CertificateLoader.LoadPkcs12FromFile(CertificatePath, CertificatePassword, X509KeyStorageFlags.EphemeralKeySet | X509KeyStorageFlags.Exportable)
            : X509Certificate2.CreateFromPemFile(CertificatePath, KeyPath);
        // Through PKCS#12, as TestCertificates does: usable by SslStream as a client certificate.
        var certificate = X509CertificateLoader.LoadPkcs12(onDisk.Export(X509ContentType.Pfx), null, X509KeyStorageFlags.EphemeralKeySet | X509KeyStorageFlags.Exportable);
        return await StartOnAsync(_certificates, _data, certificate, CertificatePath, KeyPath, extraArgs);
    }

    private static async Task<SecuredServer> StartOnAsync(TempFolder certificates, TempFolder data, X509Certificate2 certificate, string path, string? keyPath, string[] extraArgs)
    {
        string[] files = keyPath is null
            ? ["--Security:Certificate:Path", path, "--Security:Certificate:Password", CertificatePassword]
            : ["--Security:Certificate:Path", path, "--Security:Certificate:KeyPath", keyPath];
        try
        {
            var server = await InProcessServer.StartAsync(["--urls", "https://127.0.0.1:0", "--data-dir", data.Path, .. files, .. extraArgs]);
            return new SecuredServer(server, certificates, data, certificate, path, keyPath);
        }
        catch
        {
            certificates.Dispose();
            data.Dispose();
            throw;
        }
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
        if (_handedOver)
        {
            return;
        }
        await StopAsync();
        _certificates.Dispose();
        _data.Dispose();
    }

    private async Task StopAsync()
    {
        lock (_clients)
        {
            foreach (var client in _clients)
            {
                client.Dispose();
            }
            _clients.Clear();
        }
        await Server.DisposeAsync();
    }
}
