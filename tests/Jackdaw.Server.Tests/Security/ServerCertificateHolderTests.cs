using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// The holder alone, without TLS: replacements racing each other and the readers of the current
/// certificate. A certificate nobody holds is disposed the moment it is retired, so whatever reads
/// the current one (its thumbprint, its expiry) must not touch it after a replacement may have
/// disposed it.
/// </summary>
public sealed class ServerCertificateHolderTests
{
    private const int Replacements = 1_000;

    [Fact]
    public async Task ConcurrentReplacementsNeverReadACertificateTheOtherDisposed()
    {
        var certificates = TestCertificates.ServerSeries(2 * Replacements).ToArray();
        using var holder = new ServerCertificateHolder(TestCertificates.Server(), NullLogger.Instance, SecurityOptions.DefaultExpiryWarning);
        using var start = new Barrier(2);

        Task Replace(int from) => Task.Factory.StartNew(
            () =>
            {
                start.SignalAndWait();
                for (var i = from; i < from + Replacements; i++)
                {
                    Assert.True(holder.Replace(certificates[i]));
                }
            },
            TaskCreationOptions.LongRunning);

        await Task.WhenAll(Replace(0), Replace(Replacements));
        Assert.Equal(2 * Replacements, holder.Replacements);
    }

    [Fact]
    public async Task IdentifyingACallerWhileTheServerCertificateIsReplacedNeverThrows()
    {
        var certificates = TestCertificates.ServerSeries(Replacements).ToArray();
        using var folder = new TempFolder("jackdaw-holder");
        using var store = CertificateStore.Open(folder.Path);
        using var holder = new ServerCertificateHolder(TestCertificates.Server(), NullLogger.Instance, SecurityOptions.DefaultExpiryWarning);
        var authorizer = new Authorizer(store, holder, new SecurityOptions());
        using var stranger = TestCertificates.Client("stranger");
        var replacing = true;
        var lookups = 0L;

        // Each lookup of a certificate that is not the server's own compares it with the current
        // server certificate, which a replacement retires (and, held by no connection, disposes).
        var identify = Task.Factory.StartNew(
            () =>
            {
                while (Volatile.Read(ref replacing))
                {
                    Assert.Null(authorizer.Identify(stranger, connection: null, out var denied));
                    Assert.NotNull(denied);
                    lookups++;
                }
            },
            TaskCreationOptions.LongRunning);
        try
        {
            foreach (var certificate in certificates)
            {
                holder.Replace(certificate);
            }
        }
        finally
        {
            Volatile.Write(ref replacing, false);
        }
        await identify;
        Assert.True(lookups > 0);
    }

    [Fact]
    public async Task AReplacementRacingDisposeLeavesBothCertificatesDisposed()
    {
        const int Rounds = 200;
        var certificates = TestCertificates.ServerSeries(2 * Rounds).ToArray();
        for (var round = 0; round < Rounds; round++)
        {
            var holder = new ServerCertificateHolder(certificates[2 * round], NullLogger.Instance, SecurityOptions.DefaultExpiryWarning);
            using var start = new Barrier(2);
            var replace = Task.Factory.StartNew(
                () =>
                {
                    start.SignalAndWait();
                    try
                    {
                        holder.Replace(certificates[2 * round + 1]);
                    }
                    catch (ObjectDisposedException)
                    {
                        // Disposed first: the replacement is refused, and its certificate disposed.
                    }
                },
                TaskCreationOptions.LongRunning);
            start.SignalAndWait();
            holder.Dispose();
            await replace;
            Assert.Equal(IntPtr.Zero, certificates[2 * round].Handle);
            Assert.Equal(IntPtr.Zero, certificates[2 * round + 1].Handle);
        }
    }
}
