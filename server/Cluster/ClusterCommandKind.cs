using System.Text.Json.Serialization;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// What a <see cref="ClusterCommand"/> changes in the cluster's state. Written by name in the log
/// (a kind added or moved must not change what an entry already written means); entries that an
/// older version wrote as numbers still read.
/// </summary>
[JsonConverter(typeof(JsonStringEnumConverter<ClusterCommandKind>))]
public enum ClusterCommandKind
{
    /// <summary>Adds a member (or changes its URL): <c>Tag</c>, <c>Url</c>.</summary>
    PutMember,

    /// <summary>Removes a member and takes it off every database: <c>Tag</c>.</summary>
    RemoveMember,

    /// <summary>Creates a database record: <c>Database</c>, <c>Nodes</c>, <c>Settings</c>; refused when it exists.</summary>
    PutDatabase,

    /// <summary>
    /// Adds <c>Tag</c> to the nodes of <c>Database</c> as a promotable, mentored by <c>Mentor</c> (a
    /// member of it; the first member when none or another is given), until <see cref="PromoteDatabaseNode"/>.
    /// </summary>
    AddDatabaseNode,

    /// <summary>Removes <c>Database</c> from <c>Nodes</c>, or the whole record when <c>Nodes</c> is null.</summary>
    DeleteDatabase,

    /// <summary>
    /// Creates or changes indexes of <c>Database</c>: <c>Indexes</c> with their definitions (and a
    /// lock mode or priority to set). A changed definition of a <c>LockedIgnore</c> index is ignored;
    /// of a <c>LockedError</c> one, the whole command is refused.
    /// </summary>
    PutIndexes,

    /// <summary>Deletes <c>Indexes</c> (by name) of <c>Database</c>; a <c>LockedIgnore</c> index stays, a <c>LockedError</c> one refuses the command.</summary>
    DeleteIndexes,

    /// <summary>Sets the lock mode of <c>Indexes</c> of <c>Database</c> (each change's <c>LockMode</c>).</summary>
    SetIndexLock,

    /// <summary>Sets the priority of <c>Indexes</c> of <c>Database</c> (each change's <c>Priority</c>).</summary>
    SetIndexPriority,

    /// <summary>Creates subscription <c>Subscription.Name</c> of <c>Database</c> (query, mentor, start position, time); refused when it exists.</summary>
    PutSubscription,

    /// <summary>Deletes subscription <c>Subscription.Name</c> of <c>Database</c>.</summary>
    DeleteSubscription,

    /// <summary>Disables or enables subscription <c>Subscription.Name</c> of <c>Database</c> (<c>Subscription.Disabled</c>).</summary>
    SetSubscriptionDisabled,

    /// <summary>Stores the acknowledged <c>Subscription.Position</c>, from its mentor (<c>Subscription.Mentor</c>) only.</summary>
    AcknowledgeSubscription,

    /// <summary>Gives subscription <c>Subscription.Name</c> of <c>Database</c> to node <c>Subscription.Mentor</c>.</summary>
    SetSubscriptionMentor,

    /// <summary>
    /// Registers <c>Certificates</c> (each a client certificate's public part, clearance and
    /// permissions), replacing those of the same thumbprints.
    /// </summary>
    PutCertificates,

    /// <summary>Removes the registered certificate of <c>Thumbprint</c>; refused when none is registered.</summary>
    DeleteCertificate,

    /// <summary>
    /// Creates (<c>Backup.TaskId</c> 0: the new task's id is the command's log index) or replaces a
    /// periodic backup task of <c>Database</c>: <c>Backup.Configuration</c>, its mentor, and the
    /// responsible node the leader chose (or nodes to avoid). A replaced task keeps its status.
    /// </summary>
    PutBackupTask,

    /// <summary>Deletes periodic backup task <c>Backup.TaskId</c> of <c>Database</c>.</summary>
    DeleteBackupTask,

    /// <summary>Disables or enables periodic backup task <c>Backup.TaskId</c> of <c>Database</c> (<c>Backup.Disabled</c>).</summary>
    SetBackupTaskDisabled,

    /// <summary>Gives periodic backup task <c>Backup.TaskId</c> of <c>Database</c> to node <c>Backup.ResponsibleNode</c> (the leader, when the responsible one is down).</summary>
    SetBackupResponsibleNode,

    /// <summary>Records <c>Backup.Status</c> of a run, from the task's responsible node only (its <c>NodeTag</c>).</summary>
    UpdateBackupStatus,

    /// <summary>
    /// Reserves <c>Tag</c> for the node at <c>Url</c> being added (<c>ClusterState.Joining</c>),
    /// before it enters Raft's membership; <see cref="PutMember"/> makes it a member, <see cref="RemoveMember"/> drops it.
    /// </summary>
    ReserveMember,

    /// <summary>Sets the conflict solver (RavenDB's ConflictSolver JSON, <c>ConflictSolver</c>) in the record of <c>Database</c>; every node of it applies it.</summary>
    SetConflictSolver,

    /// <summary>Puts RavenDB's client configuration (<c>ClientConfiguration</c>): in the record of <c>Database</c>, or server-wide when <c>Database</c> is null.</summary>
    PutClientConfiguration,

    /// <summary>
    /// Makes promotable (or rehab) <c>Tag</c> of <c>Database</c> a member: sent by its mentor (<c>Mentor</c>, which
    /// must still be the one recorded) through the leader once <c>Progress</c> shows it caught up
    /// (<see cref="PromotionCriterion"/>); refused when it is no promotable (any more).
    /// </summary>
    PromoteDatabaseNode,

    /// <summary>Gives promotable or rehab <c>Tag</c> of <c>Database</c> another mentor, <c>Mentor</c> (a member of it): the leader's move when its mentor stopped answering.</summary>
    SetDatabaseNodeMentor,

    /// <summary>
    /// Demotes member <c>Tag</c> of <c>Database</c> to a rehab mentored by <c>Mentor</c> (another member; the
    /// first other one when none is given): the leader's move when it has not answered for long.
    /// Refused for the database's last member. <see cref="PromoteDatabaseNode"/> brings it back.
    /// </summary>
    DemoteDatabaseNode,

    /// <summary>
    /// Creates or replaces <c>Analyzers</c> (RavenDB's analyzers: name and code) in the record of
    /// <c>Database</c>; every node of the database puts them in its copy before its indexes.
    /// </summary>
    PutAnalyzers,

    /// <summary>Deletes analyzer <c>Analyzer</c> (a name) of <c>Database</c>; refused while an index of the record names it.</summary>
    DeleteAnalyzer,

    /// <summary>Sets the revisions configuration (RavenDB's RevisionsConfiguration JSON, <c>Revisions</c>) in the record of <c>Database</c>; every node of it applies it.</summary>
    SetRevisionsConfiguration,

    /// <summary>Sets the conflict revisions configuration (a RevisionsCollectionConfiguration JSON, <c>Revisions</c>) in the record of <c>Database</c>; every node of it applies it.</summary>
    SetRevisionsConflictsConfiguration,

    /// <summary>
    /// Makes rehab <c>Tag</c> of <c>Database</c> a member at once: the leader's move when none of the
    /// database's members has answered for long and this rehab does (it holds everything up to its
    /// demotion, and clients would otherwise find no node of the database). Refused for a node that
    /// is no rehab.
    /// </summary>
    PromoteAnsweringRehab,
}
