using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Text.Json;
using Jackdaw.Storage.Engine;

namespace Jackdaw.Server.Security;

/// <summary>
/// The client certificates the server knows, kept in the system store (<c>{DataDir}/System</c>, a
/// storage environment of its own beside the databases): each put or delete is durable before it
/// returns. Lookups read an immutable snapshot swapped on every change, so a request's check takes
/// no lock; <see cref="Version"/> tells a connection that its cached answer may be stale.
/// </summary>
public sealed class CertificateStore : IDisposable
{
    private const string TreeName = "Certificates";
    private readonly StorageEnvironment _environment;
    private readonly Lock _writeLock = new();
    private Snapshot _snapshot;

    private CertificateStore(StorageEnvironment environment, Snapshot snapshot)
    {
        _environment = environment;
        _snapshot = snapshot;
    }

    /// <summary>Changes with every put and delete (compare it to tell that an earlier lookup may no longer hold).</summary>
    public long Version => _snapshot.Version;

    /// <summary>Every registered certificate, ordered by name then thumbprint.</summary>
    public IReadOnlyList<CertificateDefinition> All => _snapshot.Ordered;

    /// <summary>Opens (or creates) the store in <paramref name="folder"/>.</summary>
    public static CertificateStore Open(string folder, StorageIo? io = null)
    {
        var environment = StorageEnvironment.Open(new StorageEnvironmentOptions { Path = folder, Io = io ?? StorageIo.Default });
        try
        {
            var definitions = new List<CertificateDefinition>();
            using (var read = environment.BeginRead())
            {
                if (read.OpenTree(TreeName) is { } tree)
                {
                    using var iterator = tree.Iterate();
                    for (var more = iterator.SeekFirst(); more; more = iterator.MoveNext())
                    {
                        using var json = JsonDocument.Parse(iterator.Value.ToArray());
                        definitions.Add(CertificateDefinition.ReadFrom(json.RootElement));
                    }
                }
            }
            return new CertificateStore(environment, new Snapshot(definitions, 1));
        }
        catch
        {
            environment.Dispose();
            throw;
        }
    }

    public CertificateDefinition? Get(string thumbprint) =>
        _snapshot.ByThumbprint.GetValueOrDefault(thumbprint.ToUpperInvariant());

    /// <summary>
    /// The definition that <paramref name="certificate"/> is known by: its own thumbprint, or else a
    /// registered certificate with the same public key and issuer (a renewal keeps its access, as
    /// RavenDB does). Null when neither.
    /// </summary>
    public CertificateDefinition? Find(X509Certificate2 certificate)
    {
        var snapshot = _snapshot;
        if (snapshot.ByThumbprint.TryGetValue(certificate.Thumbprint, out var known))
        {
            return known;
        }
        if (snapshot.ByPinningHash.Count == 0)
        {
            return null;
        }
        var hash = CertificateDefinition.PinningHash(certificate);
        if (!snapshot.ByPinningHash.TryGetValue(hash, out var sameKey))
        {
            return null;
        }
        var issuer = certificate.Issuer;
        return sameKey.Where(d => d.Issuer == issuer).MaxBy(d => d.NotAfter);
    }

    /// <summary>Stores <paramref name="definition"/> (replacing one of the same thumbprint); durable when it returns.</summary>
    public void Put(CertificateDefinition definition)
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            definition.WriteTo(json);
        }
        lock (_writeLock)
        {
            using (var write = _environment.BeginWrite())
            {
                write.CreateTree(TreeName).Put(Encoding.UTF8.GetBytes(definition.Thumbprint), buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
                write.Commit();
            }
            var all = _snapshot.Ordered.Where(d => d.Thumbprint != definition.Thumbprint).Append(definition).ToList();
            _snapshot = new Snapshot(all, _snapshot.Version + 1);
        }
    }

    /// <summary>Removes the certificate of <paramref name="thumbprint"/>; false when it was not registered.</summary>
    public bool Delete(string thumbprint)
    {
        thumbprint = thumbprint.ToUpperInvariant();
        lock (_writeLock)
        {
            if (!_snapshot.ByThumbprint.ContainsKey(thumbprint))
            {
                return false;
            }
            using (var write = _environment.BeginWrite())
            {
                write.CreateTree(TreeName).Delete(Encoding.UTF8.GetBytes(thumbprint));
                write.Commit();
            }
            _snapshot = new Snapshot(_snapshot.Ordered.Where(d => d.Thumbprint != thumbprint).ToList(), _snapshot.Version + 1);
            return true;
        }
    }

    public void Dispose() => _environment.Dispose();

    private sealed class Snapshot
    {
        public Snapshot(List<CertificateDefinition> definitions, long version)
        {
            Version = version;
            Ordered = definitions
                .OrderBy(d => d.Name, StringComparer.OrdinalIgnoreCase)
                .ThenBy(d => d.Thumbprint, StringComparer.Ordinal)
                .ToList();
            ByThumbprint = definitions.ToDictionary(d => d.Thumbprint, StringComparer.OrdinalIgnoreCase);
            ByPinningHash = definitions.GroupBy(d => d.PublicKeyPinningHash, StringComparer.Ordinal)
                .ToDictionary(g => g.Key, g => g.ToArray(), StringComparer.Ordinal);
        }

        public long Version { get; }

        public IReadOnlyList<CertificateDefinition> Ordered { get; }

        public Dictionary<string, CertificateDefinition> ByThumbprint { get; }

        public Dictionary<string, CertificateDefinition[]> ByPinningHash { get; }
    }
}
