using Jackdaw.Server.Hosting;
using Microsoft.Extensions.Configuration;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>Server settings read from in-memory configuration, as the host reads its own.</summary>
public static class Configured
{
    public static ServerOptions Options(params (string Key, string Value)[] settings) =>
        ServerOptions.FromConfiguration(new ConfigurationBuilder()
            .AddInMemoryCollection(settings.Select(s => new KeyValuePair<string, string?>(s.Key, s.Value)))
            .Build());
}
