__all__ = ['ttypes', 'constants', 'SchedulerService', 'GetTaskService', 'NodeMonitorService', 'InternalService', 'BackendService', 'ExtendedBackendService', 'FrontendService']
