using System.Reflection;

namespace Jackdaw.Client;

/// <summary>Creates the indexes an application declares as <see cref="AbstractJavaScriptIndexCreationTask"/> classes.</summary>
public static class IndexCreation
{
    /// <summary>
    /// Deploys every index of <paramref name="assembly"/>: each non-abstract subclass of
    /// <see cref="AbstractJavaScriptIndexCreationTask"/> with a parameterless constructor, all in
    /// one request. Indexes that exist with another definition are rebuilt side by side and swapped
    /// in once caught up, so queries keep answering meanwhile. Returns, per index in name order,
    /// whether it was <see cref="IndexDeploymentOutcome.Created"/>, left
    /// <see cref="IndexDeploymentOutcome.Unchanged"/>, <see cref="IndexDeploymentOutcome.Replaced"/>,
    /// or <see cref="IndexDeploymentOutcome.Ignored"/> by a lock. Throws
    /// <see cref="IndexLockedException"/> (and changes nothing) when a changed index is locked with
    /// <see cref="IndexLockMode.LockedError"/>.
    /// </summary>
    public static Task<IndexDeployment[]> CreateIndexesAsync(Assembly assembly, DocumentStore store, string? database = null, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(assembly);
        return CreateIndexesAsync(FindTasks(assembly), store, database, token);
    }

    /// <summary>Deploys the given tasks in one request, as <see cref="CreateIndexesAsync(Assembly, DocumentStore, string?, CancellationToken)"/> does.</summary>
    public static async Task<IndexDeployment[]> CreateIndexesAsync(IEnumerable<AbstractJavaScriptIndexCreationTask> tasks, DocumentStore store, string? database = null, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(tasks);
        ArgumentNullException.ThrowIfNull(store);
        var definitions = tasks.Select(task => task.CreateIndexDefinition()).ToArray();
        if (definitions.Length == 0)
        {
            return [];
        }

        var maintenance = database is null ? store.Maintenance : store.Maintenance.ForDatabase(database);
        return await DeployAsync(maintenance, definitions, token).ConfigureAwait(false);
    }

    /// <summary>An instance of every index task type of <paramref name="assembly"/>, in name order.</summary>
    public static IEnumerable<AbstractJavaScriptIndexCreationTask> FindTasks(Assembly assembly)
    {
        ArgumentNullException.ThrowIfNull(assembly);
        return assembly.GetTypes()
            .Where(t => t is { IsClass: true, IsAbstract: false, ContainsGenericParameters: false }
                && typeof(AbstractJavaScriptIndexCreationTask).IsAssignableFrom(t)
                && t.GetConstructor(Type.EmptyTypes) is not null)
            .OrderBy(t => t.FullName, StringComparer.Ordinal)
            .Select(t => (AbstractJavaScriptIndexCreationTask)Activator.CreateInstance(t)!);
    }

    /// <summary>
    /// PUTs <paramref name="definitions"/> and says what each did. The outcome is decided from the
    /// definitions and lock modes the server had just before the PUT, by the server's own rule for
    /// "changed" (<see cref="IndexDefinitionComparison"/>); the server's PUT answer names the
    /// indexes but not what happened to them. Another client changing the same indexes between the
    /// two reads and the PUT can make an outcome stale.
    /// </summary>
    internal static async Task<IndexDeployment[]> DeployAsync(MaintenanceOperations maintenance, IReadOnlyList<IndexDefinition> definitions, CancellationToken token)
    {
        var currentDefinitions = maintenance.GetIndexesAsync(token);
        var currentStats = maintenance.GetIndexStatisticsAsync(token);
        await Task.WhenAll(currentDefinitions, currentStats).ConfigureAwait(false);
        var existing = new Dictionary<string, IndexDefinition>(StringComparer.OrdinalIgnoreCase);
        foreach (var definition in currentDefinitions.Result)
        {
            existing.TryAdd(definition.Name, definition);
        }

        var lockModes = new Dictionary<string, IndexLockMode>(StringComparer.OrdinalIgnoreCase);
        foreach (var stats in currentStats.Result)
        {
            lockModes.TryAdd(stats.Name, stats.LockMode);
        }

        var outcomes = definitions.Select(definition =>
            !existing.TryGetValue(definition.Name, out var current) ? IndexDeploymentOutcome.Created
            : IndexDefinitionComparison.SameAs(current, definition) ? IndexDeploymentOutcome.Unchanged
            : lockModes.GetValueOrDefault(definition.Name) == IndexLockMode.LockedIgnore ? IndexDeploymentOutcome.Ignored
            : IndexDeploymentOutcome.Replaced).ToArray();

        var results = await maintenance.PutIndexesAsync(definitions, token).ConfigureAwait(false);
        return [.. definitions.Select((definition, i) => new IndexDeployment(i < results.Length && results[i].Index.Length > 0 ? results[i].Index : definition.Name, outcomes[i]))];
    }
}
