using System.Security.Cryptography.X509Certificates;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// The real server, secured, in this process: HTTPS on 127.0.0.1 port 0 with a certificate made for
/// the test (a PFX in the temp folder), client certificates registered straight into its store.
/// The server's own certificate is ClusterAdmin, so <see cref="NewDatabaseAsync"/> creates databases
/// with it; each test works in a database of its own.
/// </summary>
public sealed class SecuredServerFixture : IAsyncLifetime
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), $"jackdaw-client-secured-{Guid.NewGuid():N}");
    private readonly List<X509Certificate2> _registered = [];
    private JackdawHost? _host;
    private int _databases;

    public SecuredServerFixture()
        : this(TestCertificates.Server())
    {
    }

    /// <summary>A server presenting <paramref name="serverCertificate"/> (owned by the fixture from now on).</summary>
    internal SecuredServerFixture(X509Certificate2 serverCertificate)
    {
        ServerCertificate = serverCertificate;
        PublicServerCertificate = X509CertificateLoader.LoadCertificate(serverCertificate.RawData);
    }

    /// <summary>The server's certificate with its key: a ClusterAdmin client certificate too.</summary>
    public X509Certificate2 ServerCertificate { get; }

    /// <summary>The server's certificate as a client knows it (no key): what a store trusts.</summary>
    public X509Certificate2 PublicServerCertificate { get; }

    public string Url => _host!.Urls.Single();

    public async Task InitializeAsync()
    {
        Directory.CreateDirectory(_folder);
        var pfx = TestCertificates.WritePfx(ServerCertificate, Path.Combine(_folder, "server.pfx"), "secret");
        _host = JackdawHost.Create(
            ["--urls", "https://127.0.0.1:0", "--data-dir", Path.Combine(_folder, "data"), "--Security:Certificate:Path", pfx, "--Security:Certificate:Password", "secret"],
            builder => builder.Logging.ClearProviders());
        await _host.StartAsync();
    }

    /// <summary>A new client certificate (disposed with the fixture), registered with <paramref name="clearance"/> and, for a ValidUser, <paramref name="permissions"/>.</summary>
    public X509Certificate2 Register(string name, SecurityClearance clearance, params (string Database, DatabaseAccess Access)[] permissions)
    {
        var certificate = TestCertificates.Client(name);
        lock (_registered)
        {
            _registered.Add(certificate);
        }

        _host!.Server.Security!.Store.Put(CertificateDefinition.Of(certificate, name, clearance, permissions.ToDictionary(p => p.Database, p => p.Access)));
        return certificate;
    }

    /// <summary>A store on a new database, presenting a new certificate registered as a ValidUser with <paramref name="access"/> to that database.</summary>
    public async Task<DocumentStore> NewUserStoreAsync(string name, DatabaseAccess access = DatabaseAccess.ReadWrite)
    {
        var database = await NewDatabaseAsync();
        return Store(Register(name, SecurityClearance.ValidUser, (database, access)), database);
    }

    /// <summary>A new, empty database, created with the server's own certificate.</summary>
    public async Task<string> NewDatabaseAsync()
    {
        var name = $"secured{Interlocked.Increment(ref _databases)}";
        using var admin = Store(ServerCertificate, name);
        await admin.Maintenance.CreateDatabaseAsync(name);
        return name;
    }

    /// <summary>An initialized store on <paramref name="database"/> presenting <paramref name="certificate"/> (none when null), trusting the server's certificate.</summary>
    public DocumentStore Store(X509Certificate2? certificate, string database, Action<DocumentStore>? configure = null)
    {
        var store = new DocumentStore { Urls = [Url], Database = database, Certificate = certificate, TrustedServerCertificate = PublicServerCertificate };
        configure?.Invoke(store);
        return store.Initialize();
    }

    public async Task DisposeAsync()
    {
        if (_host is not null)
        {
            await _host.DisposeAsync();
        }

        ServerCertificate.Dispose();
        PublicServerCertificate.Dispose();
        foreach (var certificate in _registered)
        {
            certificate.Dispose();
        }

        try
        {
            Directory.Delete(_folder, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}
