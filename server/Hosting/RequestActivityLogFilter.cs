namespace Jackdaw.Server.Hosting;

/// <summary>
/// Keeps ASP.NET Core's hosting from making a request <see cref="System.Diagnostics.Activity"/> and a
/// logging scope for every request that nothing will ever show. The host asks its category
/// (<c>Microsoft.AspNetCore.Hosting.Diagnostics</c>) <c>IsEnabled(Critical)</c> once per request, and
/// when that is true starts an activity (trace and span ids, two execution-context changes) and pushes
/// a scope (request id and path): about 820 of the 1,650 bytes a GET of a document allocated, and
/// 10-20% of its CPU (perf/RESULTS.md, issue 33). Both exist for log records: the category's own
/// request records, which are Information (request starting, finished), and the scopes of any record
/// written during the request, which a provider writes only when told to (<c>IncludeScopes</c>).
/// So this decorator of the logger factory answers <c>IsEnabled(Critical)</c> for that category as
/// <c>IsEnabled(Information)</c> unless the configuration asks for scopes. Every record still reaches
/// the providers with its own level (<see cref="ILogger.Log{TState}"/> is passed on as it is): the
/// category's Critical records (a failed startup, written with <c>LogCritical</c>, which does not ask
/// <c>IsEnabled</c>) are logged as before, and the other levels are answered as configured.
/// </summary>
internal sealed class RequestActivityLogFilter(ILoggerFactory inner, bool scopesWritten) : ILoggerFactory
{
    internal const string HostingCategory = "Microsoft.AspNetCore.Hosting.Diagnostics";

    public ILogger CreateLogger(string categoryName)
    {
        var logger = inner.CreateLogger(categoryName);
        return categoryName == HostingCategory && !scopesWritten ? new Logger(logger) : logger;
    }

    public void AddProvider(ILoggerProvider provider) => inner.AddProvider(provider);

    public void Dispose() => inner.Dispose();

    /// <summary>Whether any provider is configured to write scopes (<c>Logging:{provider}[:FormatterOptions]:IncludeScopes</c> true).</summary>
    public static bool ScopesWritten(IConfiguration configuration) =>
        configuration.GetSection("Logging").AsEnumerable().Any(setting =>
            setting.Key.EndsWith(":IncludeScopes", StringComparison.OrdinalIgnoreCase)
            && bool.TryParse(setting.Value, out var include) && include);

    private sealed class Logger(ILogger inner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => inner.BeginScope(state);

        // Levels are read live (a configuration reload changes them), as the inner logger does.
        public bool IsEnabled(LogLevel logLevel) =>
            logLevel == LogLevel.Critical ? inner.IsEnabled(LogLevel.Information) && inner.IsEnabled(LogLevel.Critical) : inner.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            inner.Log(logLevel, eventId, state, exception, formatter);
    }
}
