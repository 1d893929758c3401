using System.Runtime.CompilerServices;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>The environment every server a test assembly starts inherits, in process or as a child process (linked into each test assembly).</summary>
internal static class TestEnvironment
{
    /// <summary>
    /// No server of the tests reloads appsettings.json on a change: the watch would take one of
    /// the user's inotify instances (128 on a stock Linux) per server, and a run of tests in
    /// parallel would run out of them.
    /// </summary>
    [ModuleInitializer]
    internal static void Set() => Environment.SetEnvironmentVariable("DOTNET_hostBuilder__reloadConfigOnChange", "false");
}
