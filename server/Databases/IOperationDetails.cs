using System.Text.Json;

namespace Jackdaw.Server.Databases;

/// <summary>
/// The counts of a long-running operation that is not a bulk insert (an import, an export): it
/// writes its own progress and result in RavenDB's shapes (<see cref="OperationStateJson"/> puts
/// them in the <c>OperationState</c>). Read from other threads while the operation runs: an
/// implementation keeps its counts safe to read at any moment.
/// </summary>
public interface IOperationDetails
{
    /// <summary>Moves whenever the counts do: progress is published only when it changed.</summary>
    long Version { get; }

    /// <summary>The <c>Progress</c> object while the operation runs.</summary>
    void WriteProgress(Utf8JsonWriter writer);

    /// <summary>The <c>Result</c> object once the operation completed.</summary>
    void WriteResult(Utf8JsonWriter writer);
}
